export { checkEncoderAccess, type EncoderCommand } from './check-process.js';
export type { AccessContext } from './context.js';
export { isInside } from './local-path.js';
export { FILE_OPTIONS } from './option-table.js';
export type { OwnServer } from './network-target.js';
export {
  compileAccessRules,
  directionRefusal,
  type AccessRules,
  type AccessSettings,
  type Direction,
} from './rules.js';
