/**
 * Sets a variable of this process's environment (which the service reads its chain nodes from) and returns
 * what puts it back: one bench's value must not reach the next bench's service, which inherits it.
 */
export function setEnvForBench(name: string, value: string): () => void {
  const previous = process.env[name];
  process.env[name] = value;
  return () => {
    if (previous === undefined) delete process.env[name];
    else process.env[name] = previous;
  };
}
