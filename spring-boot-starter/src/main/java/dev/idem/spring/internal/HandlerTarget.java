package dev.idem.spring.internal;

import java.lang.reflect.Method;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;

/**
 * Where a Spring MVC handler's {@code @Idempotent} marks are read: the class its bean was made
 * from and the most specific method of that class. The mapping's own view is not enough: for a
 * bean served through a JDK proxy it holds the {@code $Proxy} class and the interface's method, so
 * an implementation's marks would be missed (and a keyed retry run twice) while startup's
 * {@link IdempotentPlacement}, which reads the bean's class, finds them well placed. Both read the
 * class the same way ({@link IdempotentPlacement#beanClass}), so they choose the same mark.
 *
 * <p>The class is also part of the handler's identity: two controllers inheriting one handler
 * method from a base class share its {@link Method} but not their class marks.
 *
 * @param type the bean's class, a proxy's target class, a CGLIB subclass's superclass
 * @param method the handler's method as declared or inherited by {@code type}
 */
record HandlerTarget(Class<?> type, Method method) {
  /**
   * @param hm a handler method of a mapping, as it registered it or as resolved for a request
   * @param beans the factory that resolves the handler's bean name, or null to read the mapping's class
   */
  static HandlerTarget of(HandlerMethod hm, ConfigurableListableBeanFactory beans) {
    // A request's handler is a copy holding the bean instance; the mapping's holds its name, which
    // the bean factory tells the target class of (a JDK proxy instance would not, without Advised).
    HandlerMethod registered = hm.getResolvedFromHandlerMethod() != null ? hm.getResolvedFromHandlerMethod() : hm;
    Object bean = registered.getBean();
    Class<?> type = null;
    if (bean instanceof String name) {
      if (beans != null) {
        type = IdempotentPlacement.beanClass(beans, name);
      }
    } else {
      type = ClassUtils.getUserClass(AopUtils.getTargetClass(bean));
    }
    if (type == null) {
      type = ClassUtils.getUserClass(hm.getBeanType());
    }
    return new HandlerTarget(type, AopUtils.getMostSpecificMethod(hm.getMethod(), type));
  }
}
