import type { RtmpConnection, RtmpSessionSink } from './rtmp/index.js';
import { type SessionCollector, type IpIgnoreList, LiveSessions } from '../session/index.js';

/**
 * RTMP publishers and players as sessions of the `rtmp` collector; the reference is the stream
 * name (`/live/abc.stream` → `abc`), as datarhei Core's.
 */
export class RtmpSessions extends LiveSessions<RtmpConnection> implements RtmpSessionSink {
  constructor(collector: SessionCollector, ignoreList: IpIgnoreList, enabled: () => boolean = () => true) {
    super(
      collector,
      ignoreList,
      (path) => path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]*$/, ''),
      enabled,
    );
  }
}
