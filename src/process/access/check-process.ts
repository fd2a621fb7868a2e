import { checkAddress } from './address-check.js';
import type { AccessContext, Checks, Findings } from './context.js';
import { checkOptionList, checkOptions, checkValue } from './option-check.js';

/** The parts of a process config the policy reads (placeholders already resolved). */
export interface EncoderCommand {
  options: readonly string[];
  /**
   * `reference`: the address names another process's output (`#id:output=out`), which was checked
   * as that process's output; only the options are checked here.
   */
  input: readonly {
    address: string;
    options: readonly string[];
    reference?: boolean;
    /** Read by a feeder of its own while the input is lost: checked as an input too. */
    fallback?: { address: string; options: readonly string[] };
  }[];
  output: readonly { address: string; options: readonly string[] }[];
}

/**
 * Every reason the encoder command must not run, each as `<field path>: <reason>` naming the
 * address or option (docs/processes.md#process-config; issue 10 item 2). Empty when it may. `written` is the same config
 * before placeholders were resolved: messages quote top-level addresses as the user wrote them,
 * and credentials in URLs (`{memfs}` carries the memfs password) are never repeated.
 */
export function checkEncoderAccess(
  resolved: EncoderCommand,
  written: EncoderCommand,
  context: AccessContext,
): string[] {
  const problems: string[] = [];
  const findings: Findings = {
    refuse: (where, reason) => {
      const line = withoutCredentials(`${where}: ${reason}`);
      if (!problems.includes(line)) problems.push(line);
    },
  };
  const checks: Checks = {
    address: (address, direction, format, where, depth) =>
      checkAddress(address, direction, format, where, depth, context, findings, checks),
    optionList: (text, where, depth) => checkOptionList(text, where, depth, findings, checks),
    value: (value, where) => checkValue(value, where, context, findings),
  };
  checkOptions(resolved.options, 'options', findings, checks);
  resolved.input.forEach((input, index) => {
    const fallback = input.fallback;
    if (fallback !== undefined) {
      const path = `input[${index}].fallback`;
      const format = checkOptions(fallback.options, `${path}.options`, findings, checks);
      const writtenFallback = written.input[index]?.fallback?.address;
      checkAddress(
        fallback.address,
        'input',
        format,
        `${path}.address`,
        0,
        context,
        quoted(findings, writtenFallback),
        checks,
      );
    }
    const format = checkOptions(input.options, `input[${index}].options`, findings, checks);
    if (input.reference === true) return;
    const where = `input[${index}].address`;
    checkAddress(
      input.address,
      'input',
      format,
      where,
      0,
      context,
      quoted(findings, written.input[index]?.address),
      checks,
    );
  });
  resolved.output.forEach((output, index) => {
    const format = checkOptions(output.options, `output[${index}].options`, findings, checks);
    const where = `output[${index}].address`;
    checkAddress(
      output.address,
      'output',
      format,
      where,
      0,
      context,
      quoted(findings, written.output[index]?.address),
      checks,
    );
  });
  return problems;
}

/** Adds the address as written (with its placeholders) to each refusal of a top-level address. */
function quoted(findings: Findings, written: string | undefined): Findings {
  if (written === undefined) return findings;
  return { refuse: (where, reason) => findings.refuse(`${where} "${written}"`, reason) };
}

/** `scheme://user:password@host` → `scheme://host`: refusals must not echo the memfs password. */
function withoutCredentials(text: string): string {
  return text.replace(/(\/\/)[^/@\s"]*@/g, '$1');
}
