package io.krabka.streams.coordination.client;

import io.krabka.streams.coordination.Balance;

/**
 * How the roles one member contends for are shared out, as its own reads show them.
 *
 * @param balance the member's balance setting
 * @param roles how many roles it contends for
 * @param held how many of them it holds now, by its own contenders (not by its last read)
 * @param fairShare the most one live member holds in an even share: {@code ceil(roles / liveMembers)}
 * @param liveMembers how many members it counts as alive among those contending for its roles
 * @param movesOut how many roles it handed over on its own to even out the shares
 */
public record RoleShare(Balance balance, int roles, int held, int fairShare, int liveMembers, long movesOut) {}
