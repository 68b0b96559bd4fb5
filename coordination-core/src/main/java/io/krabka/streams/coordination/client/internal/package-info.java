/**
 * The machinery behind the client: contenders' passes, leadership terms, lease writes and group
 * commit.
 *
 * <p>Not API: any class here may change or go away in any release.
 */
@NullMarked
package io.krabka.streams.coordination.client.internal;

import org.jspecify.annotations.NullMarked;
