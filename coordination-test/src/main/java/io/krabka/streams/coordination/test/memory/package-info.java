/**
 * An in-memory stand-in for a Kafka cluster and its coordination topic
 * ({@link InMemoryCluster}), with injected faults, for tests that run the core library
 * without a broker. Its behaviour follows the broker's where the library depends on it;
 * tests that prove what Kafka does run against a real broker. Test kit, not for production code.
 */
package io.krabka.streams.coordination.test.memory;
