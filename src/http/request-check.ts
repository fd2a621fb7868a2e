import type { Static, TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { Check } from 'typebox/value';

/** The JSON-schema keywords a request schema is walked by (TypeBox schemas are JSON schemas). */
interface SchemaNode {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  minimum?: number;
  anyOf?: SchemaNode[];
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
}

/**
 * Checks a request part against its contract's schema, and words each problem as the v16 error
 * details do: `<field path>: <what was expected>`, the path in the request's own terms
 * (`input[0].options`, `limits.cpu_usage`), one problem per field, in the schema's order. The
 * wording comes from the schema at the failing field, so it is the same for every domain: an
 * array of scalars is one field (`options: must be an array of strings`), and a field that may be
 * `null` ("not given") is named by the type it must have when given.
 *
 * A valid part costs one compiled check. An invalid one is walked along the schema (objects by
 * their properties, arrays of objects by their items), each scalar field and array of scalars
 * checked as a whole, so every problem is named (the validator's own error list stops after a
 * few and words unions as their branches).
 *
 * Compiled on the first check, so an unused route costs the start nothing (issue 11).
 */
export class RequestCheck<Schema extends TSchema> {
  private validator: Validator | undefined;

  /** `root` names the whole part in a problem about it (`body: must be a JSON object`). */
  constructor(
    readonly schema: Schema,
    private readonly root = 'body',
  ) {}

  /** The problems of `value`; empty when it matches the schema. */
  problems(value: unknown): string[] {
    this.validator ??= Compile(this.schema);
    if (this.validator.Check(value)) return [];
    const problems: string[] = [];
    walk(this.schema, value, { path: '', root: this.root }, problems);
    // A keyword the walk does not follow (none of the contracts use one yet) still refuses.
    if (problems.length === 0)
      problems.push(`${this.root}: ${this.validator.Errors(value)[0]?.message ?? 'invalid'}`);
    return problems;
  }

  /** `value` typed by the schema, or its problems. */
  read(value: unknown): { value: Static<Schema>; problems: [] } | { value?: undefined; problems: string[] } {
    const problems = this.problems(value);
    return problems.length === 0 ? { value: value as Static<Schema>, problems: [] } : { problems };
  }
}

/** Where the walk is: the field path (`''` at the root) and the name of the root. */
interface Place {
  path: string;
  root: string;
}

/** Adds the problems of `value` at `place` against `schema`. */
function walk(schema: SchemaNode, value: unknown, place: Place, problems: string[]): void {
  if (value === null && schema.anyOf?.some((branch) => branch.type === 'null')) return;
  const node = given(schema);
  const { path } = place;
  const problem = (): string => `${path === '' ? place.root : path}: ${expectation(node, path === '')}`;
  if (node.type === 'object' && node.properties !== undefined) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(problem());
      return;
    }
    const fields = value as Record<string, unknown>;
    for (const [key, property] of Object.entries(node.properties)) {
      const fieldPath = path === '' ? key : `${path}.${key}`;
      if (fields[key] !== undefined) walk(property, fields[key], { ...place, path: fieldPath }, problems);
      else if (node.required?.includes(key)) problems.push(`${fieldPath}: is required`);
    }
  } else if (node.type === 'array' && node.items !== undefined && isContainer(node.items)) {
    if (!Array.isArray(value)) {
      problems.push(problem());
      return;
    }
    const items = node.items;
    value.forEach((item, index) => walk(items, item, { ...place, path: `${path}[${index}]` }, problems));
  } else if (!Check(schema as TSchema, value)) {
    problems.push(problem());
  }
}

/** What a value at `node` must be, in the details' words. */
function expectation(node: SchemaNode, root: boolean): string {
  const nonNegative = node.minimum === 0 ? 'non-negative ' : '';
  const choices = node.enum ?? node.anyOf?.map((branch) => branch.const);
  if (choices !== undefined && choices.every((choice) => choice !== undefined)) {
    return `must be one of ${choices.map((choice) => JSON.stringify(choice)).join(', ')}`;
  }
  switch (node.type) {
    case 'object':
      return root ? 'must be a JSON object' : 'must be an object';
    case 'array':
      return `must be an array of ${node.items?.type === 'object' ? 'objects' : `${node.items?.type ?? 'value'}s`}`;
    case 'string':
      return 'must be a string';
    case 'boolean':
      return 'must be a boolean';
    case 'integer':
      return `must be a ${nonNegative}integer`;
    case 'number':
      return `must be a ${nonNegative}number`;
    default:
      return 'does not match the API description';
  }
}

/** The schema a value must have when it is given: the non-null branch of `T | null`. */
function given(node: SchemaNode): SchemaNode {
  const branches = node.anyOf?.filter((branch) => branch.type !== 'null');
  return branches?.length === 1 ? (branches[0] as SchemaNode) : node;
}

function isContainer(node: SchemaNode | undefined): boolean {
  const type = node === undefined ? undefined : given(node).type;
  return type === 'object' || type === 'array';
}
