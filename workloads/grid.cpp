#include "workloads/grid.hpp"

#include <stdexcept>

#include "workloads/error.hpp"
#include "workloads/workload.hpp"

namespace paratwin::workloads {

namespace {

std::string axis_names(const Grid& grid) {
  std::string known;
  for (const auto& a : grid.axes()) known += (known.empty() ? "" : ", ") + a.name;
  return known;
}

}  // namespace

Grid::Grid(std::vector<Axis> axes) : axes_(std::move(axes)) {
  if (axes_.size() > 32) throw std::invalid_argument("a grid has at most 32 axes");
  for (const auto& a : axes_) {
    if (a.size < 1) throw std::invalid_argument("grid axis " + a.name + " has size < 1");
    stride_.push_back(size_);
    size_ *= a.size;
  }
}

int Grid::axis_index(std::string_view name) const {
  for (size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return static_cast<int>(i);
  return -1;
}

AxisMask Grid::mask(std::string_view name) const {
  int i = axis_index(name);
  return i < 0 ? 0 : AxisMask{1} << i;
}

int64_t Grid::axis_size(std::string_view name) const {
  int i = axis_index(name);
  return i < 0 ? 1 : axes_[i].size;
}

std::vector<int64_t> Grid::coords(int64_t rank) const {
  std::vector<int64_t> c(axes_.size());
  for (size_t i = 0; i < axes_.size(); ++i) c[i] = coord(rank, static_cast<int>(i));
  return c;
}

int64_t Grid::rank_of(const std::vector<int64_t>& c) const {
  int64_t r = 0;
  for (size_t i = 0; i < axes_.size(); ++i) r += c[i] * stride_[i];
  return r;
}

int64_t Grid::with_coord(int64_t rank, int axis, int64_t value) const {
  return rank + (value - coord(rank, axis)) * stride_[axis];
}

int64_t Grid::group_size(AxisMask m) const {
  int64_t n = 1;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (m & (AxisMask{1} << i)) n *= axes_[i].size;
  return n;
}

int64_t Grid::group_member(int64_t rank, AxisMask m, int64_t index) const {
  int64_t r = rank;
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (!(m & (AxisMask{1} << i))) continue;
    r = with_coord(r, static_cast<int>(i), index % axes_[i].size);
    index /= axes_[i].size;
  }
  return r;
}

std::vector<int64_t> Grid::group(int64_t rank, AxisMask m) const {
  const int64_t n = group_size(m);
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) out.push_back(group_member(rank, m, k));
  return out;
}

int64_t Grid::index_in_group(int64_t rank, AxisMask m) const {
  int64_t index = 0, scale = 1;
  for (size_t i = 0; i < axes_.size(); ++i) {
    if (!(m & (AxisMask{1} << i))) continue;
    index += coord(rank, static_cast<int>(i)) * scale;
    scale *= axes_[i].size;
  }
  return index;
}

std::string Grid::mask_name(AxisMask m) const {
  std::string s;
  for (size_t i = 0; i < axes_.size(); ++i)
    if (m & (AxisMask{1} << i)) s += (s.empty() ? "" : "+") + axes_[i].name;
  return s.empty() ? "self" : s;
}

Grid make_grid(const Workload& w) {
  std::vector<Axis> axes;
  const auto& t = w.parallel.tensor;
  switch (t.mode) {
    case TensorMode::none:
      break;
    case TensorMode::megatron:
      axes.push_back({"tensor", t.size});
      break;
    case TensorMode::optimus:
      axes.push_back({"col", t.cols});
      axes.push_back({"row", t.rows});
      break;
    case TensorMode::axonn:
      axes.push_back({"x", t.x});
      axes.push_back({"y", t.y});
      axes.push_back({"z", t.z});
      break;
  }
  // Megatron-LM's rank order puts the context ranks right after the tensor ranks (tp-cp-ep-dp-pp).
  if (w.parallel.context > 1) axes.push_back({"context", w.parallel.context});
  if (w.model.moe.enabled()) axes.push_back({"expert", w.parallel.expert});
  axes.push_back({"pipe", w.parallel.pipeline.stages});
  // Hybrid sharding (FSDP HYBRID_SHARD): the data-parallel ranks form shard groups of
  // framework.sharding.shard_group ("data", inner) replicated across "replica" (outer), as FSDP's
  // device mesh (replicate, shard) numbers them: torch/distributed/fsdp/_init_utils.py
  // _init_intra_and_inter_node_groups, v2.1, shard groups of consecutive ranks.
  const int64_t g = w.framework.sharding.shard_group;
  if (w.parallel.zero_stage == 3 && g > 0 && g < w.parallel.data) {
    axes.push_back({"data", g});
    axes.push_back({"replica", w.parallel.data / g});
  } else {
    axes.push_back({"data", w.parallel.data});
  }
  return Grid(std::move(axes));
}

PlacementMap::PlacementMap(const Grid& grid, const std::vector<std::string>& order, int64_t devices_per_node,
                           const Tile& tile)
    : grid_(grid), devices_per_node_(devices_per_node < 1 ? 1 : devices_per_node) {
  std::vector<int> axes;
  if (order.empty()) {
    for (size_t i = 0; i < grid.axes().size(); ++i) axes.push_back(static_cast<int>(i));
  } else {
    std::vector<bool> seen(grid.axes().size(), false);
    for (size_t k = 0; k < order.size(); ++k) {
      int i = grid.axis_index(order[k]);
      const std::string where = "placement.order[" + std::to_string(k) + "]";
      if (i < 0)
        throw WorkloadError(where, "= \"" + order[k] + "\" is not an axis of this grid (" + axis_names(grid) + ")");
      if (seen[i]) throw WorkloadError(where, "= \"" + order[k] + "\" appears twice");
      seen[i] = true;
      axes.push_back(i);
    }
    // Axes of size one do not move any rank; they may be left out.
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i]) continue;
      if (grid.axes()[i].size > 1)
        throw WorkloadError("placement.order", "does not list axis \"" + grid.axes()[i].name + "\" (size " +
                                                   std::to_string(grid.axes()[i].size) + ")");
      axes.push_back(static_cast<int>(i));
    }
  }
  std::vector<int64_t> extent(grid.axes().size(), 1);
  for (const auto& [name, e] : tile) {
    const std::string where = "placement.tile." + name;
    const int i = grid.axis_index(name);
    if (i < 0) throw WorkloadError(where, "is not an axis of this grid (" + axis_names(grid) + ")");
    const int64_t size = grid.axes()[static_cast<size_t>(i)].size;
    if (e < 1 || size % e != 0)
      throw WorkloadError(where, "= " + std::to_string(e) + " does not divide the axis size " + std::to_string(size));
    extent[static_cast<size_t>(i)] = e;
  }
  for (int i : axes)
    if (extent[static_cast<size_t>(i)] > 1) digits_.push_back({i, 1, extent[static_cast<size_t>(i)]});
  for (int i : axes) {
    const int64_t e = extent[static_cast<size_t>(i)];
    digits_.push_back({i, e, grid.axes()[static_cast<size_t>(i)].size / e});
  }
}

int64_t PlacementMap::device_of(int64_t rank) const {
  int64_t device = 0, scale = 1;
  for (const auto& d : digits_) {
    device += (grid_.coord(rank, d.axis) / d.divisor % d.size) * scale;
    scale *= d.size;
  }
  return device;
}

DeviceSlot PlacementMap::slot_of(int64_t rank) const {
  const int64_t d = device_of(rank);
  return {d / devices_per_node_, d % devices_per_node_};
}

}  // namespace paratwin::workloads
