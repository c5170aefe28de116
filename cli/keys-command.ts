import { parseArgs } from 'node:util';
import { domainSchema } from '../shared/requests/fields.js';
import type { Scope } from '../shared/routes.js';
import type { NewCredential } from '../shared/services/credentials.js';
import type { CredentialType } from '../shared/store/credentials-repo.js';
import { hasControlCharacters } from './terminal-text.js';

// The arguments of `npm run keys` (README, "Keys"), checked before anything touches DynamoDB.

export const KEYS_USAGE = `usage:
  npm run keys -- create --domain D [--domain D2 ...] [--type project|personal]
                         [--scopes analytics:read,analytics:write] [--owner ID] [--event-limit N] [--json]
  npm run keys -- revoke KEY_ID [--json]
  add --aws to act on a deployed stack's table (CREDENTIALS_TABLE) instead of ./.data`;

// A Record over Scope, so a new scope in routes.ts fails to compile until it is listed here.
const knownScopes: Record<Scope, true> = { 'analytics:read': true, 'analytics:write': true };
const credentialTypes: Record<CredentialType, true> = { project: true, personal: true };

export class UsageError extends Error {}

export type KeysCommand = ({ name: 'create'; input: NewCredential } | { name: 'revoke'; keyId: string }) & {
  json: boolean;
  aws: boolean;
};

/** Parses and validates the arguments; throws UsageError with a message for the person at the terminal. */
export function parseKeysCommand(args: string[]): KeysCommand | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        domain: { type: 'string', multiple: true },
        type: { type: 'string' },
        scopes: { type: 'string' },
        owner: { type: 'string' },
        'event-limit': { type: 'string' },
        json: { type: 'boolean', default: false },
        aws: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const [name, ...rest] = positionals;
  if (name === 'revoke') {
    const createFlags = ['domain', 'type', 'scopes', 'owner', 'event-limit'] as const;
    if (createFlags.some((flag) => values[flag] !== undefined)) throw new UsageError('revoke takes only a KEY_ID');
    if (rest.length !== 1 || !rest[0]) throw new UsageError('revoke takes exactly one KEY_ID');
    return { name, keyId: rest[0]!, json: values.json, aws: values.aws };
  }
  if (name !== 'create') throw new UsageError(name ? `unknown command "${name}"` : 'missing command: create or revoke');
  if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);

  const type = values.type ?? 'project';
  if (!Object.hasOwn(credentialTypes, type)) throw new UsageError(`--type must be project or personal, not "${type}"`);
  const domains = values.domain ?? [];
  if (domains.length === 0) throw new UsageError('create needs at least one --domain');
  for (const domain of domains) {
    if (!domainSchema.safeParse(domain).success)
      throw new UsageError(`--domain "${domain}" is not a lower-case domain name (e.g. shop.example.com)`);
  }
  if (type === 'project' && domains.length !== 1)
    throw new UsageError('a project key takes exactly one --domain; use --type personal for several');
  const input: NewCredential = { type: type as CredentialType, domains };
  if (values.scopes !== undefined) input.scopes = parseScopes(values.scopes);
  if (values.owner !== undefined) {
    if (values.owner.trim() === '') throw new UsageError('--owner must not be empty');
    if (hasControlCharacters(values.owner))
      throw new UsageError('--owner must not contain control characters (newlines, escapes) or direction overrides');
    input.owner = values.owner;
  }
  if (values['event-limit'] !== undefined) input.eventLimit = parseLimit(values['event-limit']);
  return { name, input, json: values.json, aws: values.aws };
}

function parseScopes(text: string): Scope[] {
  const scopes = [...new Set(text.split(',').map((scope) => scope.trim()))];
  const unknown = scopes.filter((scope) => !Object.hasOwn(knownScopes, scope));
  if (scopes.length === 0 || unknown.length > 0) {
    throw new UsageError(`unknown scope "${unknown[0] ?? ''}" (known: ${Object.keys(knownScopes).join(', ')})`);
  }
  return scopes as Scope[];
}

function parseLimit(text: string): number {
  const limit = Number(text);
  if (!/^[1-9][0-9]*$/.test(text) || !Number.isSafeInteger(limit))
    throw new UsageError(`--event-limit must be a positive integer, not "${text}"`);
  return limit;
}
