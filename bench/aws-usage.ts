import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

// Counts, in the bench's process, what the stack's AWS calls consume that AWS bills: DynamoDB's capacity (every call
// asks for ReturnConsumedCapacity TOTAL, and dynalite computes it as DynamoDB does: 4 KB read units, 1 KB write
// units, half a unit for an eventually consistent read) and the Athena result pages read. Installed once, on the
// AWS SDK's shared Client class, which every client's send() goes through.

interface Usage {
  readUnits: number;
  writeUnits: number;
  resultPages: number;
}

let usage: Usage = { readUnits: 0, writeUnits: 0, resultPages: 0 };
let installed = false;

const READS = /^(Get|BatchGet|TransactGet|Query|Scan)(Item)?Command$/;
const WRITES = /^(Put|Update|Delete|BatchWrite|TransactWrite)(Item|Items)?Command$/;

type Capacity = { CapacityUnits?: number } | { CapacityUnits?: number }[] | undefined;

export function installUsageCounter(): void {
  if (installed) return;
  installed = true;
  type Command = { constructor: { name: string }; input: object };
  const prototype = Object.getPrototypeOf(DynamoDBClient.prototype) as {
    send: (command: Command, ...rest: unknown[]) => Promise<unknown>;
  };
  const send = prototype.send;
  prototype.send = async function (this: unknown, command: Command, ...rest: unknown[]) {
    const name = command.constructor.name;
    const dynamo = READS.test(name) || WRITES.test(name);
    if (dynamo) (command.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
    const output = (await send.call(this, command, ...rest)) as { ConsumedCapacity?: Capacity };
    if (name === 'GetQueryResultsCommand') usage.resultPages += 1;
    if (dynamo) {
      const consumed = [output.ConsumedCapacity ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
      if (READS.test(name)) usage.readUnits += consumed;
      else usage.writeUnits += consumed;
    }
    return output;
  };
}

/** What was counted since the last take. */
export function takeUsage(): Usage {
  const taken = usage;
  usage = { readUnits: 0, writeUnits: 0, resultPages: 0 };
  return taken;
}
