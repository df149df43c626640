/** The filters of recall and list, for the domain's callers: the storage folder owns their SQL and these helpers. */
export { hasFilters, NO_FILTERS } from '../db/memories/filters.js';
