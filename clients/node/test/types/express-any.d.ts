// Express ships no types and @types/express is not a dependency; express-rate-limit's declarations import
// these four from Express, so for express-rate-limit.mts they are loose stand-ins (the Store type, what is
// checked, does not depend on them).
declare module 'express' {
  export type Request = any;
  export type Response = any;
  export type NextFunction = (err?: unknown) => void;
  export type RequestHandler = (req: any, res: any, next: NextFunction) => unknown;
}
