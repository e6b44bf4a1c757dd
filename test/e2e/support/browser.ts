import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (scripts/ensure-chromium.sh installs it); a browser is never downloaded. */
const CHROMIUM_PATH = '/usr/bin/chromium';
/** What keeps it off this machine's closed network: no background connections, QUIC, updates or sync. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/** Throws, saying how to install it, where Debian's chromium is missing: call it before starting anything. */
export function assertChromium(): void {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`Debian's chromium is not installed at ${CHROMIUM_PATH}; run 'bash scripts/ensure-chromium.sh' (as root).`);
}

/** A headless chromium (headless: true makes playwright pass --headless itself). */
export function launchChromium(): Promise<Browser> {
  assertChromium();
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
