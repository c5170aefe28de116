import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

// Debian's Chromium driven by playwright-core (no browser download: the machine's package is used). The flags keep
// it off the network, which the machines this runs on do not reach, and let it run as root in a container.

/** The Chromium binary: CHROMIUM_PATH, else Debian's /usr/bin/chromium; or why there is none. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): { path: string } | { missing: string } {
  const path = env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  return existsSync(path)
    ? { path }
    : { missing: `no Chromium at ${path} (apt-get install chromium, or set CHROMIUM_PATH)` };
}

/** `extraArgs`: more command-line switches (a test maps a site's host name to loopback with them). */
export async function launchChromium(path: string, extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: path,
    args: [
      ...extraArgs,
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
