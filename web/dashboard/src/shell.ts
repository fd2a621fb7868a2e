/**
 * The logged-in page: navigation, the range picker, the current screen, and the refresh loop that
 * updates the screen at the server's collection interval.
 */
import { ApiRequestError, type ApiClient } from './api.js';
import { h, replace } from './dom.js';
import { RANGES, rangeById, type TimeRange } from './ranges.js';
import { overviewView } from './views/overview.js';
import { processDetailView } from './views/process-detail.js';
import { processesView } from './views/processes.js';
import { storageView } from './views/storage.js';
import type { View, ViewContext } from './views/view.js';
import { viewersView } from './views/viewers.js';

const SCREENS = [
  { hash: '#/overview', label: 'Overview' },
  { hash: '#/processes', label: 'Processes' },
  { hash: '#/viewers', label: 'Viewers' },
  { hash: '#/storage', label: 'Storage' },
];
const RANGE_KEY = 'streamcore.dashboard.range';
/** Refresh period when the server collects no metrics (its interval reads 0). */
const FALLBACK_REFRESH_SEC = 5;

export interface Shell {
  readonly element: HTMLElement;
  destroy(): void;
}

export function createShell(api: ApiClient, canLogOut: boolean, onLogOut: () => void): Shell {
  let range: TimeRange = rangeById(sessionStorage.getItem(RANGE_KEY));
  let collectionIntervalSec = 2;
  let view: View | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let generation = 0;

  const main = h('main', { id: 'view', tabindex: -1 });
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const nav = h(
    'nav',
    { 'aria-label': 'Screens' },
    ...SCREENS.map((s) => h('a', { href: s.hash, 'data-screen': s.hash }, s.label)),
  );
  const picker = h(
    'div',
    { class: 'ranges', role: 'group', 'aria-label': 'Time range' },
    ...RANGES.map((r) =>
      h(
        'button',
        {
          type: 'button',
          'data-range': r.id,
          'aria-pressed': String(r.id === range.id),
          onclick: () => setRange(r),
        },
        r.label,
      ),
    ),
  );
  const logout = canLogOut
    ? h('button', { type: 'button', class: 'logout', onclick: onLogOut }, 'Log out')
    : null;
  const element = h(
    'div',
    { class: 'shell' },
    h('header', {}, h('strong', { class: 'brand' }, 'streamcore'), nav, picker, logout),
    main,
    h('footer', {}, status),
  );

  const context = (): ViewContext => ({
    api,
    range,
    collectionIntervalSec,
    navigate: (hash) => {
      location.hash = hash;
    },
  });

  function setRange(next: TimeRange): void {
    range = next;
    sessionStorage.setItem(RANGE_KEY, next.id);
    for (const button of picker.querySelectorAll('button'))
      button.setAttribute('aria-pressed', String(button.dataset.range === next.id));
    void refresh();
  }

  function show(): void {
    view?.destroy();
    const hash = location.hash;
    const processMatch = /^#\/process\/(.+)$/.exec(hash);
    if (processMatch) view = processDetailView(decodeURIComponent(processMatch[1]!));
    else if (hash === '#/processes') view = processesView();
    else if (hash === '#/viewers') view = viewersView();
    else if (hash === '#/storage') view = storageView();
    else view = overviewView();
    for (const link of nav.querySelectorAll('a')) {
      const current = hash.startsWith('#/process/')
        ? link.dataset.screen === '#/processes'
        : link.dataset.screen === (SCREENS.some((s) => s.hash === hash) ? hash : '#/overview');
      if (current) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${view.title} · streamcore`;
    replace(main, h('h1', { class: 'view-title' }, view.title), view.element);
    void refresh();
  }

  /** Updates the current screen now and schedules the next update; an older run's result is dropped. */
  async function refresh(): Promise<void> {
    clearTimeout(timer);
    const mine = ++generation;
    const current = view;
    if (current === undefined) return;
    try {
      const probe = await api.request<{ interval_sec: number }>('POST', '/api/v3/metrics', { metrics: [] });
      collectionIntervalSec = probe.interval_sec > 0 ? probe.interval_sec : FALLBACK_REFRESH_SEC;
      await current.update(context());
      if (mine === generation) status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    } catch (error) {
      if (mine !== generation) return;
      status.textContent =
        error instanceof ApiRequestError
          ? `${error.message}: ${error.explanation}`
          : 'The server cannot be reached';
    }
    if (mine === generation) timer = setTimeout(() => void refresh(), collectionIntervalSec * 1000);
  }

  window.addEventListener('hashchange', show);
  show();
  return {
    element,
    destroy() {
      generation++;
      clearTimeout(timer);
      window.removeEventListener('hashchange', show);
      view?.destroy();
    },
  };
}
