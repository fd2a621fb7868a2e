import type { RtmpConnection, RtmpSessionSink } from './rtmp/index.js';
import type { SessionCollector } from '../session/index.js';
import type { IpIgnoreList } from '../session/index.js';
import { LiveSessions } from './live-sessions.js';

/**
 * RTMP publishers and players as sessions of the `rtmp` collector; the reference is the stream
 * name (`/live/abc.stream` → `abc`), as datarhei Core's.
 */
export class RtmpSessions extends LiveSessions<RtmpConnection> implements RtmpSessionSink {
  constructor(collector: SessionCollector, ignoreList: IpIgnoreList) {
    super(collector, ignoreList, (path) => path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]*$/, ''));
  }
}
