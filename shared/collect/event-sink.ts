import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import {
  FIREHOSE_BATCH_MAX_BYTES,
  FIREHOSE_BATCH_MAX_RECORDS,
  FIREHOSE_RECORD_MAX_BYTES,
} from '../aws/service-limits.js';

// Where collected events go, as lines of the import format (docs/EVENT-FORMAT.md): on the stack a Kinesis Data
// Firehose delivery stream that writes them as NDJSON objects under `incoming/`, where the ingest function imports
// them; locally the data folder's own batches (local/collect/batch-sink.ts), installed by `npm start`.

export interface EventSink {
  /** Resolves once the lines are durably accepted by the sink (on the stack) or queued for the next batch (locally). */
  write(lines: string[]): Promise<void>;
}

let installed: EventSink | undefined;

export function installEventSink(sink: EventSink | undefined): void {
  installed = sink;
}

export function eventSink(env: NodeJS.ProcessEnv = process.env): EventSink {
  if (installed) return installed;
  const stream = env.EVENTS_STREAM_NAME;
  if (!stream) throw new Error('EVENTS_STREAM_NAME is not set and no event sink is installed');
  installed = firehoseSink(stream);
  return installed;
}

/** Failed records of a batch (Firehose's throttling answers them one by one) are sent again, this many times. */
const RECORD_ATTEMPTS = 3;

export function firehoseSink(streamName: string, client = new FirehoseClient({ maxAttempts: 3 })): EventSink {
  return {
    async write(lines) {
      for (const batch of batches(lines)) {
        let records = batch;
        for (let attempt = 1; records.length > 0; attempt++) {
          const answer = await client.send(
            new PutRecordBatchCommand({ DeliveryStreamName: streamName, Records: records }),
          );
          if (!answer.FailedPutCount) break;
          if (attempt === RECORD_ATTEMPTS)
            throw new Error(`Firehose refused ${answer.FailedPutCount} records ${RECORD_ATTEMPTS} times`);
          // The records answered with an error are sent again; an answer that lists none is taken as all failed.
          const responses = answer.RequestResponses;
          records = responses ? records.filter((_, i) => responses[i]?.ErrorCode) : records;
        }
      }
    },
  };
}

/** The lines as records (each ending its line: Firehose concatenates records) in batches PutRecordBatch accepts. */
function* batches(lines: string[]): Generator<{ Data: Uint8Array }[]> {
  let batch: { Data: Uint8Array }[] = [];
  let bytes = 0;
  for (const line of lines) {
    const data = new TextEncoder().encode(`${line}\n`);
    if (data.byteLength > FIREHOSE_RECORD_MAX_BYTES)
      throw new Error(`a line of ${data.byteLength} bytes is over Firehose's record limit`);
    if (batch.length === FIREHOSE_BATCH_MAX_RECORDS || bytes + data.byteLength > FIREHOSE_BATCH_MAX_BYTES) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push({ Data: data });
    bytes += data.byteLength;
  }
  if (batch.length > 0) yield batch;
}
