/**
 * The startup options of every PostgreSQL session the service keeps (the ORM's pool and the capture
 * pool): JIT compilation off. PostgreSQL compiles a statement whenever the planner's estimate of its cost
 * passes `jit_above_cost` (100,000 by default), and compiles it anew at every execution. The service's
 * statements are short and run through indexes, but an estimate can pass that line while the real cost is
 * small: on a table without statistics yet (a new database, a table that grew faster than autovacuum
 * analyzes it) the planner takes every event to have a 200th of all deliveries, and the refresh of a
 * batch's event statuses was compiled in about 200 of its 11,800 executions of a whole benchmark run, at
 * 150 ms each on average: 30 % of that statement's time (BENCHMARKS.md, session 43).
 */
export const SESSION_OPTIONS = '-c jit=off';
