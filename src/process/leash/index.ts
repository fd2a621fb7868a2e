export { EncoderRegistry, type EncoderRegistryDeps } from './encoder-registry.js';
export { probeParentDeathSignal, withParentDeathSignal } from './parent-death.js';
