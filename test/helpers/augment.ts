/** What augmentation is given and a good answer to it, the same in the core's and the adapters' tests. No Workers module. */
import type { AugmentInput } from '../../src/core/ports.ts';

/** lookup_claim as augmentation reads it. */
export const AUGMENT_TOOL: AugmentInput = {
  name: 'lookup_claim',
  docstring: 'Look up a claim by reference.',
  argument_names: ['claim_ref'],
};

/** Six requests a user could make of lookup_claim: as many as augmentation asks for. */
export const SIX_REQUESTS = [
  'look up my claim',
  'what is happening with claim CW-123456',
  'has my car claim been approved',
  'where is my insurance claim',
  'find the claim I filed last week',
  'any news on my claim',
];

/** A good answer: a description and the six requests. */
export const GOOD_AUGMENT = {
  description: 'Finds an insurance claim and tells where it stands.',
  requests: SIX_REQUESTS,
};
