import { Type, type Static } from 'typebox';
import { BEARER, errors, GUARDED, type RouteDoc } from '../http/index.js';

const Library = Type.Object({ name: Type.String(), compiled: Type.String(), linked: Type.String() });
export type SkillsLibrary = Static<typeof Library>;

const FfmpegVersion = Type.Object({
  version: Type.String({ description: 'plain semver; 0.0.0 when the binary is missing or unknown' }),
  compiler: Type.String(),
  configuration: Type.String(),
  libraries: Type.Array(Library),
});
export type FfmpegVersion = Static<typeof FfmpegVersion>;

const Item = Type.Object({ id: Type.String(), name: Type.String() });
export type SkillsItem = Static<typeof Item>;

const Codec = Type.Object({
  id: Type.String(),
  name: Type.String(),
  encoders: Type.Array(Type.String()),
  decoders: Type.Array(Type.String()),
});
export type SkillsCodec = Static<typeof Codec>;

const Device = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** The devices found for this device type; streamcore does not enumerate hardware (docs/compatibility.md). */
  devices: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), extra: Type.String(), media: Type.String() }),
  ),
});
export type SkillsDevice = Static<typeof Device>;

const CodecLists = Type.Object({
  audio: Type.Array(Codec),
  video: Type.Array(Codec),
  subtitle: Type.Array(Codec),
});
export type CodecLists = Static<typeof CodecLists>;

const DeviceLists = Type.Object({ demuxers: Type.Array(Device), muxers: Type.Array(Device) });
export type DeviceLists = Static<typeof DeviceLists>;

const FormatLists = Type.Object({ demuxers: Type.Array(Item), muxers: Type.Array(Item) });
export type FormatLists = Static<typeof FormatLists>;

const ProtocolLists = Type.Object({ input: Type.Array(Item), output: Type.Array(Item) });
export type ProtocolLists = Static<typeof ProtocolLists>;

/** The answer of both skills routes (datarhei Core v16 `api.Skills`): what the configured ffmpeg can do. */
const Skills = Type.Object({
  ffmpeg: FfmpegVersion,
  filter: Type.Array(Item),
  hwaccels: Type.Array(Item),
  codecs: CodecLists,
  devices: DeviceLists,
  formats: FormatLists,
  protocols: ProtocolLists,
});
export type Skills = Static<typeof Skills>;

function skillsRoute(summary: string): RouteDoc {
  return {
    summary,
    tags: ['system'],
    security: BEARER,
    responses: { 200: Skills, ...errors(...GUARDED, 429) },
  };
}

/** The skills routes (`/api/v3/skills`), described for the API document. */
export const SKILLS_DOCS: Record<string, RouteDoc> = {
  'GET /api/v3/skills': skillsRoute('What the configured ffmpeg can do, found at start and on reload'),
  'GET /api/v3/skills/reload': skillsRoute('Ask the configured ffmpeg again what it can do'),
};
