package dev.idem.spring.internal;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Keeps the embedded Tomcat's response open at the end of a forward through a wrapped response:
 * sets its context's {@code suspendWrappedResponseAfterForward} to false, Tomcat 10.1's default,
 * which Tomcat 11 (Boot 4) turned on. With it on, Tomcat unwraps the response a forward was given
 * and finishes its own at the end of the forward, so the answer the guard holds back until it is
 * stored (lease mode) or committed (transactional mode), then sends, reached nobody: the first
 * client of a handler that forwards (a {@code forward:} view name, a JSP view) got an empty body.
 *
 * <p>The factory is found by its {@code addContextCustomizers} method, and Tomcat's context is set
 * by name: Boot moved its Tomcat factory and customizer types to other packages in 4.0, and the
 * starter compiles against 3.5. A factory without the method (another server), or a Tomcat without
 * the setting, is left as it is. Stateless, thread-safe.
 */
public final class TomcatForwards implements BeanPostProcessor {
  private static final Logger LOG = LoggerFactory.getLogger(TomcatForwards.class);
  private static final String SETTING = "setSuspendWrappedResponseAfterForward";

  @Override
  public Object postProcessBeforeInitialization(Object bean, String beanName) throws BeansException {
    Method add = addContextCustomizers(bean.getClass());
    if (add == null) {
      return bean;
    }
    Class<?> type = add.getParameterTypes()[0].getComponentType();
    Object customizer = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
      switch (method.getName()) {
        case "customize" -> {
          keepResponseOpen(args[0]);
          return null;
        }
        case "equals" -> {
          return proxy == args[0];
        }
        case "hashCode" -> {
          return System.identityHashCode(proxy);
        }
        case "toString" -> {
          return "Idem: " + SETTING + "(false)";
        }
        default -> {
          return null;
        }
      }
    });
    Object customizers = Array.newInstance(type, 1);
    Array.set(customizers, 0, customizer);
    try {
      add.invoke(bean, customizers);
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Idem could not set {}(false) on the embedded Tomcat ({}): a guarded handler that forwards may send"
          + " an empty body on Tomcat 11; set it with a TomcatContextCustomizer", SETTING, e.toString());
    }
    return bean;
  }

  /** The factory's {@code addContextCustomizers(XxxCustomizer...)} for an interface type, or null. */
  private static Method addContextCustomizers(Class<?> type) {
    for (Method m : type.getMethods()) {
      if (m.getName().equals("addContextCustomizers") && m.getParameterCount() == 1
          && m.getParameterTypes()[0].isArray() && m.getParameterTypes()[0].getComponentType().isInterface()) {
        return m;
      }
    }
    return null;
  }

  private static void keepResponseOpen(Object context) {
    try {
      context.getClass().getMethod(SETTING, boolean.class).invoke(context, false);
    } catch (NoSuchMethodException e) {
      // A Tomcat without the setting never finishes the response at the end of a forward.
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn("Idem could not set {}(false) on the embedded Tomcat's context ({}): a guarded handler that"
          + " forwards may send an empty body on Tomcat 11", SETTING, e.toString());
    }
  }
}
