import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Flags that keep Chromium from reaching out on its own (this machine has no internet).
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's Chromium (CHROMIUM_PATH), headless, through playwright-core: the browser of the tests.
 *
 * @example
 * const browser = await launchChromium(); t.after(() => browser.close());
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS });
}
