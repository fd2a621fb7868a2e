import {
  absoluteOutputAddress,
  parseOutputReference,
  resolveConfig,
  type PlaceholderValues,
  type ProcessConfig,
  type RunScope,
} from '../config/index.js';

export interface InputReferencesDeps {
  /** Real absolute disk directory: base of relative output addresses. */
  diskRoot: string;
  /** The server-wide placeholder values as they are now. */
  placeholders: () => PlaceholderValues;
  /** The resolved config of another process. */
  lookup: (id: string) => ProcessConfig | undefined;
  /** The stored config of another process (placeholders kept), resolved again for a run. */
  lookupStored: (id: string) => ProcessConfig | undefined;
}

/**
 * Inputs that read another process's output (`#<id>:output=<output id>`, docs/processes.md): what
 * address each one opens. Followed at every start, since the other process may have changed.
 */
export class InputReferences {
  constructor(private readonly deps: InputReferencesDeps) {}

  /**
   * A copy of a resolved config whose inputs that refer to another process's output are that
   * output's address; throws when one refers to nothing. For a run (`run`), the output is
   * resolved again for it: an `{rtmp}` or `{srt}` there then carries the run's own token, not
   * the server's.
   */
  follow(config: ProcessConfig, run?: RunScope): ProcessConfig {
    const resolved = { ...config };
    resolved.input = config.input.map((input) => {
      const reference = parseOutputReference(input.address);
      if (reference === undefined) return input;
      const other = this.deps.lookup(reference.processId);
      const index = other?.output.findIndex((candidate) => candidate.id === reference.outputId) ?? -1;
      let output = other?.output[index];
      if (output === undefined) throw new Error(`input "${input.id}": ${input.address} refers to nothing`);
      const stored = this.deps.lookupStored(reference.processId);
      const own = stored?.output[index];
      if (run !== undefined && stored !== undefined && own !== undefined) {
        const values = { ...this.deps.placeholders(), run };
        output = resolveConfig({ ...stored, input: [], output: [own] }, values).output[0] ?? output;
      }
      return { ...input, address: absoluteOutputAddress(output.address, this.deps.diskRoot) };
    });
    return resolved;
  }
}
