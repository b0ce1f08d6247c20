"""redis_ratelimit.adapters: the module behind limiters that applications already call, so that moving to it
is a change of configuration, not of code. Each adapter is a module of its own, imported by name, since it
needs that library and the rest of the package does not:

- limits_storage: a storage of the python `limits` library (and so of Flask-Limiter and SlowAPI) under the
  URI schemes redis+ratelimit:// and rediss+ratelimit://.

The idea: an adapter speaks the library's interface and answers each of its decisions with one call of
the module, so the library's own strategies, decorators and headers run unchanged."""
