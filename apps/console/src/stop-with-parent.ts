/** How often the console looks whether the package manager that started it is still there. */
const PARENT_CHECK_MS = 500;

/**
 * `pnpm console` runs the console as pnpm's child, and pnpm dies of a SIGTERM without passing it
 * on: the console would serve on, orphaned. Started by a package manager's script
 * (npm_lifecycle_event set), the console watches its parent, and once it is gone (the process
 * re-parented) sends itself the SIGTERM it missed: the same graceful stop. Returns the disposer.
 */
export function stopWithParent(): () => void {
  if (process.env.npm_lifecycle_event === undefined) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, "SIGTERM");
  }, PARENT_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
