import type { z } from 'zod';
import { invalidInput } from '../errors.js';
import type { MemoryFilters } from '../memory/types.js';
import { optionalEnum, optionalString, tagList, timestamp } from './arguments.js';

/** The filters recall and list_memories share; every one is optional and they combine with AND. */
export const filterArguments = {
  tags: tagList('Only memories carrying these tags (normalised like remember\'s tags); see tag_match.'),
  tag_match: optionalEnum(['any', 'all'], 'With tags: "any" (default) keeps memories with at least one of them, "all" only those with every one.', 'any'),
  session_id: optionalString(200, 'Only memories stored with this session_id (exact match).'),
  capture_mode: optionalEnum(['explicit', 'inferred'], 'Only memories stored with this capture_mode.', undefined),
  source_provider: optionalString(200, 'Only memories stored with this source_provider (exact match).'),
  created_after: timestamp('Only memories created at or after this time (ISO 8601 with time zone).'),
  created_before: timestamp('Only memories created before this time (ISO 8601 with time zone).'),
};

type FilterArgs = { [K in keyof typeof filterArguments]: z.output<(typeof filterArguments)[K]> };

export function toFilters(args: FilterArgs): MemoryFilters {
  if (args.created_after !== undefined && args.created_before !== undefined && args.created_before <= args.created_after) {
    throw invalidInput('created_before: must be later than created_after');
  }
  return {
    tags: args.tags,
    tagMatch: args.tag_match,
    sessionId: args.session_id,
    captureMode: args.capture_mode,
    sourceProvider: args.source_provider,
    createdAfter: args.created_after,
    createdBefore: args.created_before,
  };
}
