import assert from 'node:assert/strict';
import { test } from 'node:test';
import ts from 'typescript';
import { LEGACY_OPERATION_IDS } from '../src/operations/index.js';

// The client's methods of the earlier revision carry `@deprecated` from their declarations in the
// operation table (src/operations/index.ts), as the OpenAPI document marks them deprecated, so that
// an editor strikes their calls through; the current ones carry none. Read as an editor reads them.
test("the client's legacy methods are @deprecated in its types, and no current method is", () => {
  const file = new URL('client.types.ts', import.meta.url).pathname;
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, strict: true, noEmit: true });
  const checker = program.getTypeChecker();
  const tags = new Map<string, string[]>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'client') {
      tags.set(
        node.name.text,
        checker
          .getSymbolAtLocation(node.name)
          ?.getJsDocTags(checker)
          .map((tag) => tag.name) ?? [],
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(program.getSourceFile(file) as ts.SourceFile);
  for (const id of LEGACY_OPERATION_IDS.filter((id) => tags.has(id))) assert.deepEqual(tags.get(id), ['deprecated'], id);
  for (const [name, found] of tags) if (!name.startsWith('legacy')) assert.deepEqual(found, [], name);
  assert.ok(tags.has('legacySort') && tags.has('legacyIsOdd') && tags.has('isEven'), [...tags.keys()].join(', '));
});
