// The layout of the files the writers of this version write: every relation of derivedRelations
// (derived-relations.ts) beside every event file, with all its declared columns. A store's files written at a lower
// layout may lack a relation's column added since; the local store's upgrade derives them again before it publishes,
// S3's upkeep rewrites a domain's partitions and then records the layout in the domain's file states
// (docs/STORAGE.md, "Upgrading the S3 store"). Raise it with every column or relation added to what is derived.
//   1: page buckets' `referrer_domain`, visitor days' first pageview and session ids, session fragments' `url_paths`.
export const STORE_LAYOUT = 1;
