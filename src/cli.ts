#!/usr/bin/env node
import { refuseUnsupportedNode } from './node-version.js';

// The `json-utility` command: on a Node.js outside `engines` it says so and exits 1 before loading the rest.
refuseUnsupportedNode();
await import('./cli-program.js');
