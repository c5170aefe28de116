import { FirehoseClient, PutRecordBatchCommand } from '@aws-sdk/client-firehose';
import { FIREHOSE_BATCH_MAX_RECORDS } from '../aws/service-limits.js';

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
      for (let from = 0; from < lines.length; from += FIREHOSE_BATCH_MAX_RECORDS) {
        let records = lines.slice(from, from + FIREHOSE_BATCH_MAX_RECORDS).map((line) => ({
          // One line per record: Firehose concatenates records, so each ends its own line.
          Data: new TextEncoder().encode(`${line}\n`),
        }));
        for (let attempt = 1; records.length > 0; attempt++) {
          const answer = await client.send(
            new PutRecordBatchCommand({ DeliveryStreamName: streamName, Records: records }),
          );
          if (!answer.FailedPutCount) break;
          if (attempt === RECORD_ATTEMPTS)
            throw new Error(`Firehose refused ${answer.FailedPutCount} records ${RECORD_ATTEMPTS} times`);
          records = records.filter((_, i) => answer.RequestResponses?.[i]?.ErrorCode);
        }
      }
    },
  };
}
