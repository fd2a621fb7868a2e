/** Headless Chromium for the page tests: the launcher the scripts use too (scripts/chromium.ts). */
export { CHROMIUM, launchChromium as launchBrowser } from '../../scripts/chromium.js';
