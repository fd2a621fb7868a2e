import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { GUARDED_ERRORS } from '../http/index.js';
import type { SkillsService } from './skills.js';

const Item = Type.Object({ id: Type.String(), name: Type.String() });
const Codec = Type.Object({
  id: Type.String(),
  name: Type.String(),
  encoders: Type.Array(Type.String()),
  decoders: Type.Array(Type.String()),
});
const Device = Type.Object({
  id: Type.String(),
  name: Type.String(),
  devices: Type.Array(
    Type.Object({ id: Type.String(), name: Type.String(), extra: Type.String(), media: Type.String() }),
  ),
});

/** The answer of both skills routes (datarhei Core v16 `api.Skills`). */
export const SkillsSchema = Type.Object({
  ffmpeg: Type.Object({
    version: Type.String({ description: 'plain semver; 0.0.0 when the binary is missing or unknown' }),
    compiler: Type.String(),
    configuration: Type.String(),
    libraries: Type.Array(
      Type.Object({ name: Type.String(), compiled: Type.String(), linked: Type.String() }),
    ),
  }),
  filter: Type.Array(Item),
  hwaccels: Type.Array(Item),
  codecs: Type.Object({ audio: Type.Array(Codec), video: Type.Array(Codec), subtitle: Type.Array(Codec) }),
  devices: Type.Object({ demuxers: Type.Array(Device), muxers: Type.Array(Device) }),
  formats: Type.Object({ demuxers: Type.Array(Item), muxers: Type.Array(Item) }),
  protocols: Type.Object({ input: Type.Array(Item), output: Type.Array(Item) }),
});

/** `GET /api/v3/skills` and `GET /api/v3/skills/reload` (runs the binary again, then answers). */
export function registerSkillsRoutes(v3: FastifyInstance, skills: SkillsService): void {
  const schema = { response: { 200: SkillsSchema, ...GUARDED_ERRORS } };
  const described = { tags: ['system'], security: [{ bearerAuth: [] }] };
  v3.get(
    '/skills',
    {
      schema: {
        ...schema,
        ...described,
        summary: 'What the configured ffmpeg can do, found at start and on reload',
      },
    },
    () => skills.settled(),
  );
  v3.get(
    '/skills/reload',
    { schema: { ...schema, ...described, summary: 'Ask the configured ffmpeg again what it can do' } },
    () => skills.reload(),
  );
}
