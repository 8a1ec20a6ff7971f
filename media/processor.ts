/**
 * The one shape of a media stage (werift's Processor<In, Out> idea, push-style): inputs go in
 * with push(); what the stage completes goes to the sink it was built with, at once (a framer)
 * or later (the downlink pacer's clock, a batched voice detector). A pipeline is stages built
 * with each other's push as their sink, so it reads in the order audio flows; every stage can
 * be tested alone by pushing fixtures and recording its sink.
 */
export type Sink<T> = (output: T) => void;

export interface Processor<In> {
  push(input: In): void;
}
