import * as z from 'zod';

// The S3 event notifications an SQS message carries (the body S3 sends to a queue). Keys arrive URL-encoded with
// `+` for a space; `s3:TestEvent`, sent once when a notification is set up, names no object.

const notification = z.union([
  z.object({ Event: z.literal('s3:TestEvent') }).transform(() => []),
  z
    .object({
      Records: z.array(
        z.object({
          eventName: z.string(),
          s3: z.object({ bucket: z.object({ name: z.string() }), object: z.object({ key: z.string() }) }),
        }),
      ),
    })
    .transform(({ Records }) =>
      Records.filter((r) => r.eventName.startsWith('ObjectCreated:')).map((r) => ({
        bucket: r.s3.bucket.name,
        key: decodeURIComponent(r.s3.object.key.replace(/\+/g, ' ')),
      })),
    ),
]);

export interface CreatedObject {
  bucket: string;
  key: string;
}

/** The objects an SQS message body announces; throws on a body that is not an S3 notification. */
export function createdObjects(body: string): CreatedObject[] {
  const parsed = notification.safeParse(JSON.parse(body));
  if (!parsed.success) throw new Error('not an S3 event notification');
  return parsed.data;
}
