package io.krabka.streams.coordination.spring.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.krabka.streams.coordination.Role;
import io.krabka.streams.coordination.client.Leadership;
import io.krabka.streams.coordination.spring.GuardedSender;
import java.lang.reflect.Method;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

/** Which handlers are @LeaderOnly, for which role, and the handler mistakes that fail startup. */
class LeaderOnlyHandlersTest {

    private final LeaderOnlyHandlers handlers = new LeaderOnlyHandlers(
            Set.of("orders", "billing"), new MockEnvironment().withProperty("billing.role", "billing"));

    static class Mixed {
        @LeaderOnly(role = "orders")
        void ordered(Leadership leadership) {}

        @LeaderOnly(role = "${billing.role}")
        void billed(GuardedSender<String, String> sender) {}

        void open() {}

        void takesALeadership(Leadership leadership) {}

        @LeaderOnly(role = "typo")
        void misspelled() {}

        @LeaderOnly(role = " ")
        void blank() {}
    }

    @LeaderOnly(role = "orders")
    static class AllOrders {
        void any() {}

        @LeaderOnly(role = "billing")
        void own() {}
    }

    @Test
    void aMethodsAnnotationWinsOverItsClassesAndPlaceholdersAreResolved() throws Exception {
        assertThat(handlers.roleOf(method(Mixed.class, "ordered", Leadership.class), Mixed.class))
                .contains(Role.of("orders"));
        assertThat(handlers.roleOf(method(Mixed.class, "billed", GuardedSender.class), Mixed.class))
                .contains(Role.of("billing"));
        assertThat(handlers.roleOf(method(Mixed.class, "open"), Mixed.class)).isEmpty();
        assertThat(handlers.roleOf(method(AllOrders.class, "any"), AllOrders.class))
                .contains(Role.of("orders"));
        assertThat(handlers.roleOf(method(AllOrders.class, "own"), AllOrders.class))
                .contains(Role.of("billing"));
        assertThat(handlers.any()).isTrue();
    }

    @Test
    void aRoleThatIsNotConfiguredFailsNamingTheHandlerAndTheConfiguredRoles() throws Exception {
        assertThatThrownBy(() -> handlers.check(method(Mixed.class, "misspelled"), Mixed.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@LeaderOnly(role = \"typo\")")
                .hasMessageContaining(Mixed.class.getName() + ".misspelled()")
                .hasMessageContaining("krabka.coordination.roles");
    }

    /**
     * A blank name is not a role at all: the error says so, with the core's reason, and not
     * "add it to krabka.coordination.roles", which would only fail again on the same name.
     */
    @Test
    void anInvalidRoleNameFailsSayingItIsInvalidNotThatItIsNotConfigured() throws Exception {
        assertThatThrownBy(() -> handlers.check(method(Mixed.class, "blank"), Mixed.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@LeaderOnly(role = \" \")")
                .hasMessageContaining(Mixed.class.getName() + ".blank()")
                .hasMessageContaining("does not name a valid role (invalid role \" \": must not be empty or blank)")
                .hasMessageContaining("set role to one of krabka.coordination.roles")
                .hasMessageNotContaining("not configured");
    }

    @Test
    void aLeadershipParameterOnAHandlerThatIsNotLeaderOnlyFailsNamingIt() throws Exception {
        assertThatThrownBy(() -> handlers.check(method(Mixed.class, "takesALeadership", Leadership.class), Mixed.class))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(Mixed.class.getName() + ".takesALeadership()")
                .hasMessageContaining("only a @LeaderOnly handler gets");
        handlers.check(method(Mixed.class, "ordered", Leadership.class), Mixed.class);
    }

    private static Method method(Class<?> type, String name, Class<?>... parameters) throws NoSuchMethodException {
        return type.getDeclaredMethod(name, parameters);
    }
}
