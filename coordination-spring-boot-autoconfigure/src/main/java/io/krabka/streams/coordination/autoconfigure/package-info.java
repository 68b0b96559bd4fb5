/**
 * The starter's auto-configuration: {@link CoordinationProperties} ({@code krabka.coordination.*})
 * and the configurations that build the client, the leadership loop, the fencing probe, health,
 * metrics and the endpoint from them. Applications configure it through properties; they do
 * not call it.
 */
package io.krabka.streams.coordination.autoconfigure;
