/** Numbers as people read them. */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatBytes(bytes: number | undefined): string {
  if (bytes === undefined || !Number.isFinite(bytes)) return '–';
  if (bytes < 0) return 'unlimited';
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${BYTE_UNITS[unit]}`;
}

/** Bits per second. */
export function formatBitrate(bitsPerSec: number | undefined): string {
  if (bitsPerSec === undefined || !Number.isFinite(bitsPerSec)) return '–';
  if (bitsPerSec >= 1e9) return `${(bitsPerSec / 1e9).toFixed(2)} Gbit/s`;
  if (bitsPerSec >= 1e6) return `${(bitsPerSec / 1e6).toFixed(2)} Mbit/s`;
  if (bitsPerSec >= 1e3) return `${(bitsPerSec / 1e3).toFixed(1)} kbit/s`;
  return `${Math.round(bitsPerSec)} bit/s`;
}

export function formatPercent(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(1)} %`;
}

export function formatNumber(value: number | undefined, digits = 0): string {
  return value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits);
}

/** Seconds as `3d 4h`, `2h 5m`, `4m 10s`. */
export function formatDuration(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '–';
  const s = Math.floor(seconds);
  const days = Math.floor(s / 86_400);
  const hours = Math.floor((s % 86_400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  if (days > 0) return `${days}d ${hours}h`;
  if (hours > 0) return `${hours}h ${minutes}m`;
  if (minutes > 0) return `${minutes}m ${s % 60}s`;
  return `${s}s`;
}
