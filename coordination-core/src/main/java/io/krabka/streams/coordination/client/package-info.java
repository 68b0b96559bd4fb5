/**
 * Taking roles and holding them: {@link io.krabka.streams.coordination.client.CoordinationClient}
 * acquires a {@link io.krabka.streams.coordination.client.Leadership} once, a
 * {@link io.krabka.streams.coordination.client.Contender} contends for a role for as long as it runs.
 */
@NullMarked
package io.krabka.streams.coordination.client;

import org.jspecify.annotations.NullMarked;
