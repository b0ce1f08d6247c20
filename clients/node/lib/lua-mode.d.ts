// Types of lib/lua-mode.js: the limiter calls as the project's Lua script, on a server without the module.
import type { Redis } from 'ioredis';

export type Mode = 'auto' | 'module' | 'lua';

/** An ioredis Redis whose limiter calls run on the module or as the Lua script, by mode; pass it to the
 * package's calls (limit, limitAll) in place of the client. */
export class ModeClient {
  constructor(redis: Redis, mode?: Mode);
  readonly redis: Redis;
  readonly mode: Mode;
  /** For tests only: the time (ms) the script decides at instead of the server's TIME; null in use. */
  testNowMs: number | null;
  /** Whether calls run as the script ('auto' asks COMMAND INFO rl.token once). */
  usesLua(): Promise<boolean>;
  call(command: string, ...args: Array<string | number | Buffer>): Promise<unknown>;
}

/** redis in a mode: 'module', 'lua' (RL.TOKEN, RL.LEAKY, RL.WINDOW, RL.SLIDINGLOG, RL.ALL as a script), or
 * 'auto' (default: the module when the server has it, else the script). */
export function withMode(redis: Redis, mode?: Mode): ModeClient;

/** The script's text and its SHA1 (what EVALSHA names). */
export const LUA_SCRIPT: string;
export const LUA_SHA: string;
