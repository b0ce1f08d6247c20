// Types of lib/commands.js: the package's table of the module's commands and option tokens.
import type { RedisClient } from './limits';

export interface CommandEntry {
  /** The package's call that sends the command. */
  call: string;
  /** An example call that sends it. */
  example: (redis: RedisClient) => Promise<unknown>;
  /** For each option token, an example call that sends it. */
  tokens: Record<string, (redis: RedisClient) => Promise<unknown>>;
}

/** 'RL.TOKEN', 'RL.TOKEN_RO', ..., 'RL.POLICY SET', ... */
export const COMMAND_TABLE: Readonly<Record<string, CommandEntry>>;
/** The module commands the package leaves out, with the reason. */
export const EXCLUDED_COMMANDS: Readonly<Record<'RL.SETSTATE' | 'RL.CLOCK', string>>;
