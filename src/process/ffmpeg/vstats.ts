/**
 * One line of ffmpeg's per-frame video encoding statistics (`-vstats_file … -vstats_version 2`):
 * `out=  0 st=  0 frame=    12 q= 25.0 f_size=   1523 s_size=        2kB time= 0.480 br= … type= P`.
 * ffmpeg writes one per encoded video packet of every output stream it encodes (not for copied
 * streams), which is the only live per-stream counter a stock ffmpeg offers.
 */
export interface VstatsLine {
  /** Output file index. */
  file: number;
  /** Stream index within the output file. */
  stream: number;
  q: number;
  /** Bytes of this packet. */
  frameBytes: number;
  /** The packet is a key frame (`type= I`; `?` when the encoder does not say). */
  keyframe: boolean;
}

const LINE = /^out=\s*(\d+)\s+st=\s*(\d+)\s+frame=\s*\d+\s+q=\s*(-?[\d.]+)\s+f_size=\s*(\d+)/;
const TYPE = /\stype=\s*(\S)\s*$/;

export function parseVstatsLine(line: string): VstatsLine | undefined {
  const match = LINE.exec(line);
  if (match === null) return undefined;
  const q = Number(match[3]);
  return {
    file: Number(match[1]),
    stream: Number(match[2]),
    q: Number.isFinite(q) ? q : 0,
    frameBytes: Number(match[4]),
    keyframe: TYPE.exec(line)?.[1] === 'I',
  };
}
