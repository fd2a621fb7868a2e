import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (scripts/install-system-deps.sh installs it); no browser is downloaded. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium for the page tests and the Restreamer UI walk-through. The flags keep it off
 * the network (the machine has none but loopback) and independent of any profile; `extraArgs` are
 * added to them.
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
