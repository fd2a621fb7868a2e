import {
  DECLARED_KEYS,
  isDeclaredKey,
  type IntRange,
  type KeyDeclaration,
  type KeyKind,
  type V16Kind,
} from '../config/index.js';

/**
 * The fields of datarhei Core v16's config layout (version 3, reference tag v16.14.0: `config/data.go`
 * for the JSON names, `config/config.go` for defaults and variable names), derived from the key
 * declarations (config/keys.ts). Each field is either one of streamcore's own keys (same dotted
 * path in both layouts) or a key streamcore does not implement: those are stored as they were sent
 * and answered unchanged, so a client's round trip loses nothing (docs/compatibility.md#config).
 */

export type { V16Kind };

export interface V16Field {
  /** Dotted JSON path in the v16 layout. */
  readonly path: string;
  readonly kind: V16Kind;
  /** The reference's variable name where it differs from `path` (what `overrides` lists). */
  readonly variable?: string;
  /** Set for keys streamcore does not implement: the value answered until a client stores one. */
  readonly stored?: unknown;
  /** Why a value other than `stored` is refused (unimplemented keys). */
  readonly refuse?: string;
  /** Why the API may not change this key (the file on the server still can). */
  readonly fileOnly?: string;
  /** Holds a secret: never named with its value in a message. */
  readonly secret?: boolean;
  /** Answered as `""`; a `""` sent back (or none) keeps the stored value. */
  readonly withheld?: boolean;
  /**
   * Bounds of an unimplemented `int` key (streamcore's own keys are checked by the loader with
   * theirs): a stored value is answered to clients, which may act on it, so it gets a ceiling too.
   */
  readonly range?: IntRange;
}

const V16_KINDS: Record<KeyKind, V16Kind> = {
  bool: 'bool',
  int: 'int',
  string: 'string',
  list: 'strings',
  patterns: 'strings',
  tenants: 'tenants',
  map: 'map',
  webhooks: 'objects',
  s3: 'objects',
};

function toV16Field(path: string, declaration: KeyDeclaration): V16Field | undefined {
  if (!isDeclaredKey(declaration)) {
    const { v16Kind, ...rest } = declaration;
    return { path, kind: v16Kind, ...rest };
  }
  const { kind, secret, fileOnly, v16 } = declaration;
  if (v16 === undefined) return undefined;
  return {
    path,
    kind: V16_KINDS[kind],
    ...v16,
    ...(secret ? { secret } : {}),
    ...(fileOnly === undefined ? {} : { fileOnly }),
  };
}

const DECLARATIONS = Object.entries(DECLARED_KEYS as Record<string, KeyDeclaration>);

export const V16_FIELDS: readonly V16Field[] = DECLARATIONS.flatMap(([path, declaration]) => {
  const field = toV16Field(path, declaration);
  return field === undefined ? [] : [field];
});

/**
 * streamcore's own keys that the v16 layout does not carry and that only the config file may set:
 * a body naming them would otherwise be kept as an unknown key (and have no effect), so it is
 * refused like the file-only keys above, with the reason. Never shown by `GET /api/v3/config`.
 */
export const OWN_FILE_ONLY_FIELDS: readonly V16Field[] = DECLARATIONS.flatMap(([path, declaration]) =>
  isDeclaredKey(declaration) && declaration.v16 === undefined && declaration.fileOnly !== undefined
    ? [
        {
          path,
          kind: V16_KINDS[declaration.kind],
          fileOnly: declaration.fileOnly,
          ...(declaration.secret ? { secret: true } : {}),
        },
      ]
    : [],
);

/** The v16 layout's version this server reads and answers. */
export const V16_VERSION = 3;

/** Every object on the way to a field (`api`, `api.auth`, …): a body must have objects there. */
export const V16_SECTIONS: ReadonlySet<string> = new Set(
  V16_FIELDS.flatMap((field) => {
    const parts = field.path.split('.');
    return parts.slice(0, -1).map((_, index) => parts.slice(0, index + 1).join('.'));
  }),
);
