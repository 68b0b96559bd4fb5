/**
 * The transport that talks to a Kafka cluster: the role producers, the coordination topic, its
 * readers and its watcher.
 */
@NullMarked
package io.krabka.streams.coordination.kafka;

import org.jspecify.annotations.NullMarked;
