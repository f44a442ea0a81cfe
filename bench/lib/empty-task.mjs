// A concern thread's task that does nothing: bench:dataplane times the hop to a thread with it.
export default function emptyTask() {
  return null
}
