import type { CreatedCredential } from '../shared/services/credentials.js';
import { terminalSafe } from './terminal-text.js';

/** What a person sees after a key is created: the token once, and that it cannot be shown again. */
export function newKeyMessage(created: CreatedCredential): string {
  return [
    `Created ${created.type} key ${created.key_id} for ${created.domains.join(', ')}`,
    `  owner:  ${terminalSafe(created.owner)}`,
    `  scopes: ${created.scopes.join(', ')}`,
    '',
    `  ${created.token}`,
    '',
    'This token is shown only once and cannot be shown again (only its hash is stored): copy it now.',
  ].join('\n');
}
