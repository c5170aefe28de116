import { createCredential, revokeCredential } from '../shared/services/credentials.js';
import { requireAwsTables } from './aws-target.js';
import { KEYS_USAGE, parseKeysCommand, UsageError, type KeysCommand } from './keys-command.js';
import { openLocalDynamo } from '../local/server/local-dynamo.js';
import { newKeyMessage } from './new-key-message.js';
import { localPaths } from '../local/store/paths.js';

// `npm run keys -- create ...` and `npm run keys -- revoke KEY_ID`. Exit codes: 0 done, 1 failed (unknown key,
// DynamoDB error), 2 usage error.

async function run(command: KeysCommand): Promise<number> {
  if (command.name === 'create') {
    const created = await createCredential(command.input);
    console.log(command.json ? JSON.stringify(created) : newKeyMessage(created));
    return 0;
  }
  const revoked = await revokeCredential(command.keyId);
  if (command.json) console.log(JSON.stringify({ key_id: command.keyId, revoked }));
  if (!revoked) {
    console.error(`No key with id "${command.keyId}"; nothing revoked.`);
    return 1;
  }
  if (!command.json) console.log(`Revoked key ${command.keyId}. Requests with it are refused within seconds.`);
  return 0;
}

async function main(args: string[]): Promise<number> {
  let command: KeysCommand | 'help';
  try {
    command = parseKeysCommand(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}\n\n${KEYS_USAGE}`);
    return 2;
  }
  if (command === 'help') {
    console.log(KEYS_USAGE);
    return 0;
  }
  try {
    if (command.aws) requireAwsTables(['CREDENTIALS_TABLE']);
    const dynamo = command.aws ? { close: async () => {} } : await openLocalDynamo(localPaths(), { publish: false });
    try {
      return await run(command);
    } finally {
      await dynamo.close();
    }
  } catch (error) {
    console.error(`error: ${(error as Error).message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
