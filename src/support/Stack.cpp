//===- Stack.cpp - Running on a stack of known size -----------------------===//
#include "keel/support/Stack.h"

#include <pthread.h>

namespace keel {

namespace {
struct Job {
  const std::function<int()> *body;
  int result = 0;
};
void *runJob(void *p) {
  Job *job = static_cast<Job *>(p);
  job->result = (*job->body)();
  return nullptr;
}
} // namespace

int runWithStack(size_t bytes, const std::function<int()> &body) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0)
    return body();
  Job job{&body};
  pthread_t thread;
  bool started = pthread_attr_setstacksize(&attr, bytes) == 0 &&
                 pthread_create(&thread, &attr, runJob, &job) == 0;
  pthread_attr_destroy(&attr);
  if (!started)
    return body();
  pthread_join(thread, nullptr);
  return job.result;
}

} // namespace keel
