#pragma once
// The parallel grid: named axes, rank <-> coordinates, and process groups given as a set of axes
// (a mask). Nothing here is stored per rank, so a 32,768-rank grid costs a few bytes.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paratwin::workloads {

struct Workload;

using AxisMask = uint32_t;

struct Axis {
  std::string name;
  int64_t size = 1;
};

class Grid {
 public:
  Grid() = default;
  explicit Grid(std::vector<Axis> axes);  // innermost (fastest varying) first

  const std::vector<Axis>& axes() const { return axes_; }
  int64_t size() const { return size_; }
  int axis_index(std::string_view name) const;  // -1 when absent
  AxisMask mask(std::string_view name) const;   // 0 when absent
  int64_t axis_size(std::string_view name) const;

  int64_t coord(int64_t rank, int axis) const { return (rank / stride_[axis]) % axes_[axis].size; }
  std::vector<int64_t> coords(int64_t rank) const;
  int64_t rank_of(const std::vector<int64_t>& coords) const;
  int64_t with_coord(int64_t rank, int axis, int64_t value) const;

  int64_t group_size(AxisMask m) const;
  // Members of rank's group over the axes in m, ordered with the innermost axis fastest.
  std::vector<int64_t> group(int64_t rank, AxisMask m) const;
  int64_t index_in_group(int64_t rank, AxisMask m) const;
  // Member `index` of rank's group over m (the inverse of index_in_group).
  int64_t group_member(int64_t rank, AxisMask m, int64_t index) const;
  std::string mask_name(AxisMask m) const;  // "tensor", "expert+data"

 private:
  std::vector<Axis> axes_;
  std::vector<int64_t> stride_;
  int64_t size_ = 1;
};

// The grid a workload's parallelism defines: tensor axes (x, y, z | tensor | col, row), then expert
// (MoE only), pipe, data.
Grid make_grid(const Workload& w);

struct DeviceSlot {
  int64_t node = 0;
  int64_t local = 0;  // device within the node
};

// Maps ranks to devices: the axes listed first in `order` vary fastest across consecutive devices.
// With a tile (per-axis block extents), devices are numbered inside one block first (the axes' inner
// coordinates, in `order`), then block by block (their outer coordinates, in `order`): [xu2021optimus]'s
// 2 x 2 sub-mesh per node (Fig. 8b) is the tile {"col": 2, "row": 2} with 4 devices per node.
class PlacementMap {
 public:
  // One mixed-radix digit of the device index: (coordinate on `axis` / divisor) mod size.
  struct Digit {
    int axis;
    int64_t divisor;
    int64_t size;
  };
  using Tile = std::vector<std::pair<std::string, int64_t>>;

  PlacementMap(const Grid& grid, const std::vector<std::string>& order, int64_t devices_per_node,
               const Tile& tile = {});
  int64_t device_of(int64_t rank) const;
  DeviceSlot slot_of(int64_t rank) const;
  int64_t devices_per_node() const { return devices_per_node_; }
  const std::vector<Digit>& digits() const { return digits_; }  // fastest first

 private:
  Grid grid_;
  std::vector<Digit> digits_;
  int64_t devices_per_node_;
};

}  // namespace paratwin::workloads
