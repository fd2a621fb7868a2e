import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { resolveBindAddress, resolveListenAddress, type Config } from '../config/index.js';

/** One socket the server opens at start, as the configuration asks for it. */
interface Listener {
  /** The key that names it (what a refusal names). */
  key: string;
  /** As configured (what a refusal quotes). */
  address: string;
  protocol: 'tcp' | 'udp';
  /** Empty: every interface. */
  host: string;
  port: number;
}

/** How long one trial bind may take, host name lookup included. */
const BIND_TIMEOUT_MS = 5000;

/**
 * One problem per listener of `next` that could not be opened now, so that a change over the API
 * cannot store an address the next start fails on (exit 1, nobody can reach the API to undo it).
 * Each new listener is bound for a moment and closed again; all at once, so two that collide are
 * found too. A listener the running server already has as configured is not tried; a port in use
 * that the running server holds itself (it lets go of it when it stops) counts as free.
 */
export async function listenProblems(running: Config, next: Config): Promise<string[]> {
  const held = listenersOf(running);
  const wanted = listenersOf(next).filter((listener) => !held.some((own) => sameListener(own, listener)));
  const opened: (() => void)[] = [];
  const problems: string[] = [];
  try {
    for (const listener of wanted) {
      const result = await tryBind(listener);
      if (typeof result === 'function') {
        opened.push(result);
        continue;
      }
      const ownPort =
        result.code === 'EADDRINUSE' &&
        held.some(
          (own) => own.protocol === listener.protocol && own.port === listener.port && own.port !== 0,
        );
      if (!ownPort) {
        problems.push(`${listener.key}: cannot listen on "${listener.address}": ${describe(result)}`);
      }
    }
  } finally {
    for (const close of opened) close();
  }
  return problems;
}

/** The sockets a server with this configuration opens, bound where it would bind them. */
function listenersOf(config: Config): Listener[] {
  const http = resolveBindAddress(config);
  const listeners: Listener[] = [
    { key: 'address', address: config.address, protocol: 'tcp', host: http.host, port: http.port },
  ];
  const https = config.tls.enable
    ? resolveListenAddress(config.tls.address, config.api.auth.enable)
    : undefined;
  if (https !== undefined) {
    listeners.push({ key: 'tls.address', address: config.tls.address, protocol: 'tcp', ...https });
  }
  // An ingest listener without a token binds loopback for `:port`, as ingest/listen-address.ts does.
  const add = (key: string, address: string, protocol: Listener['protocol'], token: string): void => {
    const resolved = resolveListenAddress(address, token !== '');
    if (resolved !== undefined) {
      listeners.push({ key, address, protocol, host: resolved.host, port: resolved.port });
    }
  };
  const { rtmp, srt } = config;
  if (rtmp.enable) {
    add('rtmp.address', rtmp.address, 'tcp', rtmp.token);
    if (rtmp.enable_tls) add('rtmp.address_tls', rtmp.address_tls, 'tcp', rtmp.token);
  }
  if (srt.enable) add('srt.address', srt.address, 'udp', srt.token);
  return listeners;
}

function sameListener(a: Listener, b: Listener): boolean {
  return a.key === b.key && a.protocol === b.protocol && a.host === b.host && a.port === b.port;
}

/** Binds like the listener would; answers how to close it again, or the error. */
function tryBind(listener: Listener): Promise<(() => void) | NodeJS.ErrnoException> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: (() => void) | NodeJS.ErrnoException): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const { close, bind } = listener.protocol === 'tcp' ? tcpSocket(listener) : udpSocket(listener);
    // A host name that takes this long to look up would stall the start just as well.
    const timer = setTimeout(() => {
      settle(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
    }, BIND_TIMEOUT_MS);
    bind(
      // Bound after the time-out: nobody waits for it any more.
      () => (settled ? close() : settle(close)),
      (error) => settle(error),
    );
  });
}

interface TrialSocket {
  close: () => void;
  bind: (onBound: () => void, onError: (error: NodeJS.ErrnoException) => void) => void;
}

function tcpSocket(listener: Listener): TrialSocket {
  const server = createServer();
  return {
    close: () => server.close(),
    bind: (onBound, onError) => {
      server.once('error', onError);
      // As the RTMP server does: no host means every interface, IPv6 and IPv4.
      server.listen({ host: listener.host === '' ? '::' : listener.host, port: listener.port }, onBound);
    },
  };
}

function udpSocket(listener: Listener): TrialSocket {
  const socket = createSocket(listener.host.includes(':') ? 'udp6' : 'udp4');
  return {
    close: () => socket.close(),
    bind: (onBound, onError) => {
      socket.once('error', (error: NodeJS.ErrnoException) => {
        socket.close();
        onError(error);
      });
      socket.bind(
        { address: listener.host === '' ? undefined : listener.host, port: listener.port },
        onBound,
      );
    },
  };
}

const REASONS: Record<string, string> = {
  EADDRINUSE: 'the port is in use',
  EADDRNOTAVAIL: "the address is not one of this machine's",
  EACCES: 'the server may not use this port (below 1024 it needs privileges)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
  ETIMEDOUT: `no answer within ${BIND_TIMEOUT_MS / 1000} s`,
};

function describe(error: NodeJS.ErrnoException): string {
  const code = error.code ?? error.name;
  const reason = REASONS[code];
  return reason === undefined ? error.message : `${reason} (${code})`;
}
