package dev.idem.spring.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** An order as JPA writes it: the app's own effect, in the transaction the guard joins. */
@Entity
@Table(name = "orders")
public class OrderRow {
  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;
  private String item;

  protected OrderRow() {}

  OrderRow(String item) {
    this.item = item;
  }
}
