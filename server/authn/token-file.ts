// --token-auth-file: a CSV of `token,user,uid[,"group1,group2"]`, read once at start-up
// (kube-apiserver does not reload it either).

import { readFileSync } from 'node:fs';
import { frozenUser, type UserInfo } from '../machinery/user.js';
import type { PlainTokenAuthenticator } from './token.js';
import { parseCsv } from './csv.js';

export interface TokenFileWarning {
  record: number;
  message: string;
}

/** Parses the file's text; throws with kube-apiserver's message on a short record. */
export function parseTokenFile(text: string, file: string, warn: (w: TokenFileWarning) => void = () => {}): Map<string, UserInfo> {
  const tokens = new Map<string, UserInfo>();
  let recordNum = 0;
  for (const record of parseCsv(text)) {
    if (record.length < 3) {
      throw new Error(`token file '${file}' must have at least 3 columns (token, user name, user uid), found ${record.length}`);
    }
    recordNum++;
    const [token, name, uid, groups] = record as [string, string, string, string | undefined];
    if (token === '') {
      warn({ record: recordNum, message: `empty token has been found in token file '${file}', record number '${recordNum}'` });
      continue;
    }
    if (tokens.has(token)) {
      warn({ record: recordNum, message: `duplicate token has been found in token file '${file}', record number '${recordNum}'` });
    }
    const user: UserInfo = { username: name, groups: groups !== undefined ? groups.split(',') : [] };
    if (uid !== '') user.uid = uid;
    tokens.set(token, frozenUser(user));
  }
  return tokens;
}

export function loadTokenFile(file: string, warn?: (w: TokenFileWarning) => void): Map<string, UserInfo> {
  return parseTokenFile(readFileSync(file, 'utf8'), file, warn);
}

export function createTokenFileAuthenticator(tokens: ReadonlyMap<string, UserInfo>): PlainTokenAuthenticator {
  // the same user object for every request with a token, which later stages can remember
  // their work by (withAuthenticatedGroup's completed user)
  return async (token) => tokens.get(token) ?? null;
}
