import { ingestHandler as ingestHandlerOf } from '../../functions/ingest-events.js';
import { upkeepHandler as upkeepHandlerOf } from '../../functions/store-upkeep.js';
import { upkeepStore as upkeepStoreOf } from '../../ingest/s3-upkeep.js';
import { deployed } from './aws-rules/install.js';

// The store writers as the stack deploys them: each SDK call they make is authorized against their role in the
// synthesized template (test/support/aws-rules). Tests import the writers from here, never from functions/ or ingest/.

export const ingestHandler = (...args: Parameters<typeof ingestHandlerOf>) =>
  deployed('Ingest', ingestHandlerOf(...args));
export const upkeepHandler = (...args: Parameters<typeof upkeepHandlerOf>) =>
  deployed('Upkeep', upkeepHandlerOf(...args));
export const upkeepStore = deployed('Upkeep', upkeepStoreOf);
